package dev.flashsale.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderBatch;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderRequestedCodec;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.SaleStock;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.support.SaleRows;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/** Sets sales and orders up the way order-api would, directly against Postgres, Redis and the broker. */
public class Shop {

    private final JdbcClient jdbc;
    private final StockLedger ledger;
    private final SaleStock sales;
    private final StringRedisTemplate redis;
    private final RabbitTemplate rabbit;
    private final OrderRequestedCodec codec;
    private final MessagingProperties names;

    Shop(
            JdbcClient jdbc,
            StockLedger ledger,
            SaleStock sales,
            StringRedisTemplate redis,
            RabbitTemplate rabbit,
            OrderRequestedCodec codec,
            MessagingProperties names) {
        this.jdbc = jdbc;
        this.ledger = ledger;
        this.sales = sales;
        this.redis = redis;
        this.rabbit = rabbit;
        this.codec = codec;
        this.names = names;
    }

    /** A sale that started an hour ago, with {@code stock} units in Postgres and in Redis. */
    public long openSale(int stock, int perUserLimit) {
        Instant startsAt = Instant.now().minus(Duration.ofHours(1));
        Instant endsAt = Instant.now().plus(Duration.ofHours(1));
        long saleId = SaleRows.insert(jdbc, "worker-test-", "Worker test sale", stock, perUserLimit, startsAt, endsAt);
        assertThat(sales.loadSale(saleId, stock, perUserLimit, startsAt, endsAt))
                .isTrue();
        return saleId;
    }

    /** Reserves one unit for a new order, as the API does before it publishes; the record is RESERVED. */
    public OrderRequested reserve(long saleId, String userId, Instant at) {
        return reserve(saleId, userId, at, PurchasePath.ASYNC);
    }

    /** Reserves one unit for a new order on the given path; the record is RESERVED. */
    public OrderRequested reserve(long saleId, String userId, Instant at, PurchasePath mode) {
        OrderRequested order = new OrderRequested(OrderIds.next(), saleId, userId, 1, at, null, null);
        ReserveResult result = ledger.reserve(saleId, order.orderId(), userId, 1, mode, at, false);
        assertThat(result).isInstanceOf(ReserveResult.Reserved.class);
        return order;
    }

    /** The API's happy path: reserve, publish, and on the broker's confirm mark the record PUBLISHED. */
    public OrderRequested order(long saleId, String userId) {
        OrderRequested order = reserve(saleId, userId, Instant.now());
        publish(order);
        // A worker may have claimed it already: then the record is past RESERVED and this changes nothing.
        ledger.advance(saleId, order.orderId(), EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED);
        return order;
    }

    public void publish(OrderRequested order) {
        publishRaw(codec.encode(order), order.orderId().toString());
    }

    /** Several orders in one message, as the API's group commit publishes them (contract v2). */
    public void publishBatch(List<OrderRequested> orders) {
        publishRaw(
                codec.encode(new OrderBatch(orders)),
                OrderRequestedCodec.BATCH_CONTENT_TYPE,
                OrderIds.next().toString());
    }

    public void publishRaw(byte[] body, String messageId) {
        publishRaw(body, OrderRequestedCodec.CONTENT_TYPE, messageId);
    }

    public void publishRaw(byte[] body, String contentType, String messageId) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(contentType);
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        properties.setMessageId(messageId);
        rabbit.send(names.exchange(), names.queue(), new Message(body, properties));
    }

    /**
     * A retry copy of the order waiting in the retry queue: a message still in flight, as long as the test
     * set app.messaging.retry-delay (the queue's TTL) long enough.
     */
    public void holdRetryCopy(OrderRequested order) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(OrderRequestedCodec.CONTENT_TYPE);
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        properties.setMessageId(order.orderId().toString());
        rabbit.send("", names.retryQueue(), new Message(codec.encode(order), properties));
    }

    /** The next message of the dead-letter queue, waiting up to half a second for one; null if none came. */
    public @Nullable Message deadLetter() {
        return rabbit.receive(names.deadLetterQueue(), 500);
    }

    /** The retry copies are gone (dead-lettered, say): no message of them is in flight any more. */
    public void dropRetryCopies() {
        rabbit.execute(channel -> channel.queuePurge(names.retryQueue()));
    }

    public long postgresStock(long saleId) {
        return SaleRows.remaining(jdbc, saleId);
    }

    public void setPostgresStock(long saleId, int remaining) {
        jdbc.sql("update sale_stock set remaining = :remaining where sale_id = :sale")
                .param("remaining", remaining)
                .param("sale", saleId)
                .update();
    }

    /** How many orders of the sale Postgres holds, by status. */
    public Map<OrderStatus, Long> ordersByStatus(long saleId) {
        return jdbc
                .sql("select status from purchase_order where sale_id = :sale")
                .param("sale", saleId)
                .query((rs, row) -> OrderStatus.valueOf(rs.getString("status")))
                .list()
                .stream()
                .collect(Collectors.groupingBy(status -> status, Collectors.counting()));
    }

    public long orderCount(long saleId) {
        return jdbc.sql("select count(*) from purchase_order where sale_id = :sale")
                .param("sale", saleId)
                .query(Long.class)
                .single();
    }

    public SaleCounters redisCounters(long saleId) {
        return sales.counters(saleId).orElseThrow();
    }

    /** Units the user holds or bought in the sale, as Redis's per-user totals count them. */
    public long redisUnits(long saleId, String userId) {
        Object units = redis.opsForHash().get("{sale:" + saleId + "}:users", userId);
        return units == null ? 0 : Long.parseLong((String) units);
    }

    /**
     * How long since anything read or wrote the order's Redis record, or any other of its sale's records: they
     * share one hash (Redis counts whole seconds).
     */
    public Duration redisIdle(OrderRequested order) {
        return redis.execute((RedisCallback<Duration>) connection -> connection
                .keyCommands()
                .idletime(("{sale:" + order.saleId() + "}:orders").getBytes(StandardCharsets.UTF_8)));
    }

    public ReservationState reservationState(OrderRequested order) {
        return ledger.find(order.saleId(), order.orderId()).orElseThrow().state();
    }
}
