package dev.flashsale.common.redis;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a Redis connection whose peer has answered nothing for {@code silence} while a command awaits its
 * answer. A peer that takes the bytes but answers nothing (a Redis process hung; a proxy, or an address,
 * whose master died behind it) is never dropped by the socket options of {@link RedisLink}: the kernel
 * sees every byte acknowledged. Lettuce's command timeout fails each command, not the connection, which
 * would then serve timeouts for as long as the peer stays silent. Closed here, Lettuce reconnects it at
 * once, and behind Sentinel asks the Sentinels for the master again. Any byte read counts as an answer:
 * a slow peer is alive. One per channel, at the head of its pipeline; every method runs on the channel's
 * event loop, so plain fields suffice.
 */
final class UnansweredWrites extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(UnansweredWrites.class);

    private final long silenceNanos;
    /** When the first write since the last read went out (System.nanoTime), or 0 when nothing awaits. */
    private long awaitingSince;

    private @Nullable ScheduledFuture<?> check;

    UnansweredWrites(long silenceNanos) {
        this.silenceNanos = silenceNanos;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        // A quarter of the silence: a dead peer is dropped within 1.25 x the silence of its first unanswered write.
        long every = Math.max(TimeUnit.MILLISECONDS.toNanos(100), silenceNanos / 4);
        check = ctx.executor().scheduleAtFixedRate(() -> check(ctx), every, every, TimeUnit.NANOSECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (awaitingSince == 0) {
            awaitingSince = System.nanoTime();
        }
        super.write(ctx, msg, promise);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        awaitingSince = 0;
        super.channelRead(ctx, msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    private void check(ChannelHandlerContext ctx) {
        long since = awaitingSince;
        if (since != 0 && System.nanoTime() - since > silenceNanos) {
            log.warn(
                    "Redis at {} answered nothing for {} ms while a command awaited its answer: reconnecting",
                    ctx.channel().remoteAddress(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
            stop();
            ctx.close();
        }
    }

    private void stop() {
        if (check != null) {
            check.cancel(false);
            check = null;
        }
    }
}
