/**
 * Admission at the door: a bound on the purchases one API instance works on at once, so that overload
 * is refused in microseconds instead of queueing for CPU, connections or memory.
 */
@NullMarked
package dev.flashsale.api.door;

import org.jspecify.annotations.NullMarked;
