package dev.flashsale.api.sale;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.common.stock.SaleStock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cache.annotation.CachePut;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Sales: written to Postgres and loaded into Redis in one step (Redis inside the transaction, so a sale
 * Redis never got is rolled back). A sale's definition never changes, so reads are cached.
 */
@Service
public class SaleCatalogue {

    private static final Logger log = LoggerFactory.getLogger(SaleCatalogue.class);

    private final SaleRepository sales;
    private final SaleStock stock;
    private final KnownRefusals known;

    SaleCatalogue(SaleRepository sales, SaleStock stock, KnownRefusals known) {
        this.sales = sales;
        this.stock = stock;
        this.known = known;
    }

    /** What this instance caches of a sale is also what it may refuse from memory (its window, its stock). */
    private Sale known(Sale sale) {
        known.know(sale.id(), sale.startsAt(), sale.endsAt(), sale.perUserLimit(), sale.totalStock());
        return sale;
    }

    @Transactional
    @CachePut(cacheNames = "sales", key = "#result.id()")
    Sale create(NewSale request) {
        long id;
        try {
            id = sales.insert(request);
        } catch (DuplicateKeyException e) {
            throw new ApiProblem(ProblemCode.DUPLICATE_SKU, "A sale with this sku exists already.");
        }
        stock.loadSale(id, request.stock(), request.perUserLimit(), request.startsAt(), request.endsAt());
        Sale sale = known(sales.find(id).orElseThrow());
        log.info(
                "sale {} created: sku={} stock={} perUserLimit={} {}..{}",
                id,
                sale.sku(),
                sale.totalStock(),
                sale.perUserLimit(),
                sale.startsAt(),
                sale.endsAt());
        return sale;
    }

    /**
     * Loaded once per key even when a crowd asks at the same instant (no stampede on the pool). An
     * unknown id throws, so it is never cached as missing.
     */
    @Cacheable(cacheNames = "sales", sync = true)
    public Sale get(long id) {
        return sales.find(id)
                .map(this::known)
                .orElseThrow(() -> new ApiProblem(ProblemCode.SALE_NOT_FOUND, "No sale with id " + id + "."));
    }

    /** Whether this instance has looked the sale up: {@link #get} then answers without asking Postgres. */
    public boolean isLoaded(long id) {
        return known.knows(id);
    }

    /** The newest sales first, for the ops console; not cached (new sales appear at once). */
    public List<Sale> recent(int limit) {
        return sales.recent(limit);
    }
}
