/** The published OpenAPI contract. */
@NullMarked
package dev.flashsale.api.openapi;

import org.jspecify.annotations.NullMarked;
