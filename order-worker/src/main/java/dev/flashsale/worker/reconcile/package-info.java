@NullMarked
package dev.flashsale.worker.reconcile;

import org.jspecify.annotations.NullMarked;
