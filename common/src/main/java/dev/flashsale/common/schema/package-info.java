@NullMarked
package dev.flashsale.worker.schema;

import org.jspecify.annotations.NullMarked;
