/**
 * Refusals decided where the answer is already known: a sale that has not opened or has ended, and a sale
 * this instance has seen sold out, are refused from memory, without Redis, the door or the throttle.
 */
@NullMarked
package dev.flashsale.api.refusal;

import org.jspecify.annotations.NullMarked;
