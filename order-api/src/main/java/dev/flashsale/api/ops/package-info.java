/**
 * The operator's side: the ops console at {@code /ops} (static page, admin token pasted by the operator)
 * and the small admin JSON endpoints it reads beyond the mode and stock views: recent sales and why they
 * do or do not sell, the audit trail of mode changes, and a live summary of this instance's meters and
 * the order queue.
 */
@NullMarked
package dev.flashsale.api.ops;

import org.jspecify.annotations.NullMarked;
