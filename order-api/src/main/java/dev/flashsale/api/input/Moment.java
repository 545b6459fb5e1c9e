package dev.flashsale.api.input;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.ElementType.RECORD_COMPONENT;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * An instant a sale can sensibly have: from 1970 up to the end of year 9999 (four-digit ISO years).
 * Postgres stores timestamps only up to year 294276, and {@code java.sql.Timestamp} overflows long before
 * Java's own limit, so anything wider failed as an outage instead of a refusal.
 */
@Documented
@Constraint(validatedBy = Moment.Validator.class)
@Target({FIELD, PARAMETER, RECORD_COMPONENT})
@Retention(RUNTIME)
public @interface Moment {

    Instant EARLIEST = Instant.EPOCH;
    Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    String message() default "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Validator implements ConstraintValidator<Moment, Instant> {

        @Override
        public boolean isValid(@Nullable Instant value, ConstraintValidatorContext context) {
            return value == null || (!value.isBefore(EARLIEST) && !value.isAfter(LATEST));
        }
    }
}
