@NullMarked
package dev.flashsale.api.sale;

import org.jspecify.annotations.NullMarked;
