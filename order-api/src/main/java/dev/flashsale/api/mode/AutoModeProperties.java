package dev.flashsale.api.mode;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.mode.auto.*: AUTO's model and its hysteresis (see {@link CapacityModel}).
 *
 * @param sampleInterval how often the controller samples the instance and asks the model
 * @param rehearsalInterval a path no purchase took for this long is rehearsed without a shopper
 * @param evidenceTtl how long a path's last measured back half stands once nothing measures it (its
 *     rehearsals failing); beyond it the path is unmeasured
 * @param errorRateLimit a path whose breaker's failure rate (percent) reaches this counts as failing
 * @param cpuTarget the share of the box's cores a path may fill (beyond it, CPU queues grow the answers)
 * @param syncCpu CPU per SYNC order before one was learnt, all processes (bench at aa11ba3: 0.93 ms)
 * @param asyncCpu CPU per ASYNC order before one was learnt, all processes (bench at aa11ba3: 1.24 ms)
 * @param refusalCpu CPU per refused purchase before one was learnt in overload (a ping's, 0.13 ms)
 * @param answerObjective the answer (median, arrival to 201) SYNC must be predicted within to keep a crowd:
 *     {@code k × answer ≤ objective}, {@code k} as for the rate (see {@code headroom})
 * @param linger the group commits' linger ({@code app.purchase.sync.linger}): a crowd's purchase waits for
 *     it on either path, so the model predicts no answer under it plus the path's round trip
 * @param headroom SYNC keeps the crowd while it carries {@code 1 + headroom} times the offered rate and
 *     answers within {@code answerObjective / (1 + headroom)}
 * @param returnHeadroom the larger factor a switch must buy: SYNC takes the crowd back from ASYNC only when
 *     it carries {@code 1 + returnHeadroom} times the rate and answers within the objective by that factor,
 *     {@code samples-to-sync} samples in a row; ASYNC takes the crowd from SYNC only when it carries that
 *     factor times the rate and answers that factor faster (or carries that factor times SYNC's capacity)
 * @param samplesToAsync consecutive samples the model must choose ASYNC before the crowd moves there
 * @param samplesToSync consecutive samples the model must choose SYNC before the crowd moves back
 * @param minTimeBetweenSwitches no switch follows another sooner than this, but for a failing dependency
 */
@Validated
@ConfigurationProperties("app.mode.auto")
public record AutoModeProperties(
        @DefaultValue("200ms") Duration sampleInterval,
        @DefaultValue("1s") Duration rehearsalInterval,
        @DefaultValue("60s") Duration evidenceTtl,
        @DefaultValue("20") double errorRateLimit,

        @DefaultValue("0.85") @DecimalMin("0.1") @DecimalMax("1")
        double cpuTarget,

        @DefaultValue("930us") Duration syncCpu,
        @DefaultValue("1240us") Duration asyncCpu,
        @DefaultValue("130us") Duration refusalCpu,
        @DefaultValue("35ms") Duration answerObjective,
        @DefaultValue("10ms") Duration linger,
        @DefaultValue("0.1") @DecimalMin("0") double headroom,
        @DefaultValue("0.3") @DecimalMin("0") double returnHeadroom,
        @DefaultValue("5") @Min(1) int samplesToAsync,
        @DefaultValue("10") @Min(1) int samplesToSync,
        @DefaultValue("3s") Duration minTimeBetweenSwitches) {}
