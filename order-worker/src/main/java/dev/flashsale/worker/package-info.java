@NullMarked
package dev.flashsale.worker;

import org.jspecify.annotations.NullMarked;
