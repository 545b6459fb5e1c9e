@NullMarked
package dev.flashsale.api.problem;

import org.jspecify.annotations.NullMarked;
