@NullMarked
package dev.flashsale.common.secret;

import org.jspecify.annotations.NullMarked;
