package dev.flashsale.api.mode;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.flashsale.api.input.Printable;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping(path = "/api/v1/admin/mode", produces = MediaType.APPLICATION_JSON_VALUE)
class ModeController {

    private final ModeSwitch modes;
    private final AutoPilot autoPilot;

    ModeController(ModeSwitch modes, AutoPilot autoPilot) {
        this.modes = modes;
        this.autoPilot = autoPilot;
    }

    record ModeChange(
            @NotNull @Nullable ModeSetting mode,
            @Size(max = 500) @Printable @Nullable String reason) {}

    /** Absent rather than null: the published schema types every member, and null is no Instant. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record ModeView(
            ModeSetting mode,
            String effective,
            @Nullable Instant changedAt,
            String changedBy,
            String reason,
            AutoPilot.@Nullable Switch lastSwitch) {}

    @GetMapping
    ModeView get() {
        return view(modes.flag());
    }

    @PutMapping
    ModeView put(@Valid @RequestBody ModeChange change, Authentication caller) {
        String reason = change.reason() == null ? "" : change.reason();
        return view(modes.change(change.mode(), caller.getName(), reason));
    }

    private ModeView view(ModeFlag flag) {
        return new ModeView(
                flag.mode(),
                modes.effective().name(),
                flag.changedAt(),
                flag.changedBy(),
                flag.reason(),
                autoPilot.lastSwitch().orElse(null));
    }
}
