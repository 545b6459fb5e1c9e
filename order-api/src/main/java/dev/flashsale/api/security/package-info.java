@NullMarked
package dev.flashsale.api.security;

import org.jspecify.annotations.NullMarked;
