@NullMarked
package dev.flashsale.common.order;

import org.jspecify.annotations.NullMarked;
