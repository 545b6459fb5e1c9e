@NullMarked
package dev.flashsale.common.schema;

import org.jspecify.annotations.NullMarked;
