@NullMarked
package dev.flashsale.common.redis;

import org.jspecify.annotations.NullMarked;
