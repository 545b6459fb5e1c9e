@NullMarked
package dev.flashsale.api.admin;

import org.jspecify.annotations.NullMarked;
