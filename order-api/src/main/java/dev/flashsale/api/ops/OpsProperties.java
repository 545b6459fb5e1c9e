package dev.flashsale.api.ops;

import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.ops.*: where the console finds the broker's management API (queue depth and the workers' ack
 * rate, the same numbers KEDA scales on) and how often the live rates are sampled.
 */
@ConfigurationProperties("app.ops")
record OpsProperties(
        @DefaultValue("http://127.0.0.1:15672") URI brokerManagementUrl,
        @DefaultValue("flashsale") String brokerUser,
        @DefaultValue("flashsale") String brokerPassword,
        @DefaultValue("/") String brokerVhost,
        @DefaultValue("1s") Duration brokerTimeout,
        @DefaultValue("1s") Duration sampleInterval) {}
