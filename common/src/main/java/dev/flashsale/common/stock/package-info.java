@NullMarked
package dev.flashsale.common.stock;

import org.jspecify.annotations.NullMarked;
