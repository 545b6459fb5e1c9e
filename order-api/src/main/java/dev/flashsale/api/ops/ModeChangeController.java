package dev.flashsale.api.ops;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The audit trail of mode changes ({@code mode_change}), newest first: who, when, from and to, and why. */
@RestController
class ModeChangeController {

    private final JdbcClient jdbc;

    ModeChangeController(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    record ModeChangeView(
            long id,
            Instant changedAt,
            String changedBy,
            String from,
            String to,
            @Nullable String reason) {}

    @GetMapping(path = "/api/v1/admin/mode/changes", produces = MediaType.APPLICATION_JSON_VALUE)
    List<ModeChangeView> changes(@RequestParam(defaultValue = "20") @Min(1) @Max(200) int limit) {
        return jdbc.sql("""
                        select id, changed_at, changed_by, from_mode, to_mode, reason
                        from mode_change order by id desc limit :limit""")
                .param("limit", limit)
                .query((rs, row) -> new ModeChangeView(
                        rs.getLong("id"),
                        rs.getTimestamp("changed_at").toInstant(),
                        rs.getString("changed_by"),
                        rs.getString("from_mode"),
                        rs.getString("to_mode"),
                        rs.getString("reason")))
                .list();
    }
}
