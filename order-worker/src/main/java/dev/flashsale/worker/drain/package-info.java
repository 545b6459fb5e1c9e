@NullMarked
package dev.flashsale.worker.drain;

import org.jspecify.annotations.NullMarked;
