@NullMarked
package dev.flashsale.api.schema;

import org.jspecify.annotations.NullMarked;
