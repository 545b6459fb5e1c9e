@NullMarked
package dev.flashsale.common.messaging;

import org.jspecify.annotations.NullMarked;
