package dev.flashsale.api.input;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** The client's RFC 7240 preferences this API honours: {@code respond-async} and {@code wait=N}. */
public record Preference(boolean respondAsync, @Nullable Duration waitFor) {

    static final Preference NONE = new Preference(false, null);

    public static Preference parse(@Nullable List<String> headers) {
        if (headers == null || headers.isEmpty()) {
            return NONE;
        }
        boolean respondAsync = false;
        Duration wait = null;
        for (String header : headers) {
            for (String token : header.split(",")) {
                String preference = token.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
                if (preference.equals("respond-async")) {
                    respondAsync = true;
                } else if (preference.startsWith("wait=")) {
                    wait = seconds(preference.substring(5));
                }
            }
        }
        return new Preference(respondAsync, wait);
    }

    private static @Nullable Duration seconds(String value) {
        try {
            long seconds = Long.parseLong(value.replace("\"", "").trim());
            return seconds >= 0 ? Duration.ofSeconds(seconds) : null;
        } catch (NumberFormatException e) {
            return null; // RFC 7240: a preference that cannot be understood is ignored
        }
    }
}
