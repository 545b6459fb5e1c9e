@NullMarked
package dev.flashsale.api.status;

import org.jspecify.annotations.NullMarked;
