package dev.flashsale.api.input;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.ElementType.RECORD_COMPONENT;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import jakarta.validation.ReportAsSingleViolation;
import jakarta.validation.constraints.Pattern;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * Text without control characters (Unicode category Cc: NUL, tabs, line breaks, DEL, C1). The pattern is
 * written as a range rather than {@code \P{Cc}} so that it means the same in the published OpenAPI
 * document, whose readers (schemathesis, client generators) use other regex dialects. Postgres refuses
 * NUL outright, and the others only corrupt logs and displays. {@code null} is valid, as for every
 * Bean Validation constraint.
 */
@Documented
@Pattern(regexp = "[^\\x00-\\x1F\\x7F-\\x9F]*")
@ReportAsSingleViolation
@Constraint(validatedBy = {})
@Target({FIELD, PARAMETER, RECORD_COMPONENT})
@Retention(RUNTIME)
public @interface Printable {

    String message() default "must not contain control characters";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
