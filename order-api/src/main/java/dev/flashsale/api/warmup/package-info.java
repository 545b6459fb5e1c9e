/**
 * The warm-up: before a new instance reports ready, it rehearses the purchase path without selling, so a
 * pod added during a spike does not meet the crowd with a cold JVM.
 */
@NullMarked
package dev.flashsale.api.warmup;

import org.jspecify.annotations.NullMarked;
