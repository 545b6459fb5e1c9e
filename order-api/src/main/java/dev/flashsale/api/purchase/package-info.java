@NullMarked
package dev.flashsale.api.purchase;

import org.jspecify.annotations.NullMarked;
