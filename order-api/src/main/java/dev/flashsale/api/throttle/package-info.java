/** Per-shopper rate limits, counted in Redis so that they hold across API instances. */
@NullMarked
package dev.flashsale.api.throttle;

import org.jspecify.annotations.NullMarked;
