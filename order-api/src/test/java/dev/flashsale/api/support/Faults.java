package dev.flashsale.api.support;

import static org.mockito.Mockito.withSettings;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.mockito.Mockito;
import org.mockito.invocation.InvocationOnMock;
import org.mockito.stubbing.Answer;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Faults a test switches on in beans that other threads call too (the conservation check, AUTO's idle
 * probe, a rebuild): each bean of the given types is a Mockito spy whose every call looks here first, so
 * nothing is stubbed while those threads call it. Stubbing a spy with {@code doThrow(..).when(spy)} is not
 * safe then: a call from another thread between {@code when(spy)} and the stubbed method takes the stub
 * (and the fault), and the test fails with {@code UnfinishedStubbingException}. A fault applies to every
 * call of its method, whatever the arguments, until {@link #clear}. (A spy of a proxied bean, say a
 * {@code @Repository}, cannot be verified with Mockito, which looks through the proxy: a fault's answer can
 * record what it was asked.)
 *
 * <p>Registered as a static {@code @Bean} of a test's {@code @TestConfiguration}: {@code new Faults(StockLedger.class)}.
 */
public final class Faults implements BeanPostProcessor {

    private final List<Class<?>> types;
    private final List<Fault> injected = new CopyOnWriteArrayList<>();

    private record Fault(Class<?> type, String method, Answer<?> answer) {}

    public Faults(Class<?>... types) {
        this.types = List.of(types);
    }

    /**
     * From now on every call of the method that {@code call} makes on a {@code type} answers {@code fault}
     * (the arguments {@code call} passes are ignored).
     */
    public <T> void inject(Class<T> type, Consumer<T> call, Answer<?> fault) {
        Method[] called = new Method[1];
        T recorder = Mockito.mock(type, invocation -> {
            called[0] = invocation.getMethod();
            return Mockito.RETURNS_DEFAULTS.answer(invocation);
        });
        call.accept(recorder);
        if (called[0] == null) {
            throw new IllegalArgumentException("the call made no call on " + type.getName());
        }
        injected.add(new Fault(type, signature(called[0]), fault));
    }

    /** From now on every call of the method that {@code call} makes on a {@code type} throws {@code fault}. */
    public <T> void inject(Class<T> type, Consumer<T> call, RuntimeException fault) {
        inject(type, call, invocation -> {
            throw fault;
        });
    }

    /** Every bean calls its real methods again. */
    public void clear() {
        injected.clear();
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (types.stream().noneMatch(type -> type.isInstance(bean))) {
            return bean;
        }
        return Mockito.mock(bean.getClass(), withSettings().spiedInstance(bean).defaultAnswer(this::answer));
    }

    private Object answer(InvocationOnMock invocation) throws Throwable {
        String method = signature(invocation.getMethod());
        for (Fault fault : injected) {
            if (fault.type().isInstance(invocation.getMock()) && fault.method().equals(method)) {
                return fault.answer().answer(invocation);
            }
        }
        return invocation.callRealMethod();
    }

    /** A method by name and parameters: the spy of a proxy sees the proxy's override, the test the declared one. */
    private static String signature(Method method) {
        return method.getName() + Arrays.toString(method.getParameterTypes());
    }
}
