@NullMarked
package dev.flashsale.api.mode;

import org.jspecify.annotations.NullMarked;
