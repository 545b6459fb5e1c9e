@NullMarked
package dev.flashsale.worker.sweep;

import org.jspecify.annotations.NullMarked;
