/**
 * The input policy every request body follows, checked before anything is reserved or written: strict
 * JSON numbers and enums (application.yml, {@code spring.jackson.*}), {@link Printable} strings and
 * {@link Moment} instants.
 */
@NullMarked
package dev.flashsale.api.input;

import org.jspecify.annotations.NullMarked;
