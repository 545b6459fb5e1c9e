import com.sun.tools.attach.VirtualMachine;

/** Loads async-profiler into a running JVM with one command: java Attach.java PID LIBRARY COMMAND. */
public class Attach {
    public static void main(String[] args) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        try {
            vm.loadAgentPath(args[1], args[2]);
        } finally {
            vm.detach();
        }
    }
}
