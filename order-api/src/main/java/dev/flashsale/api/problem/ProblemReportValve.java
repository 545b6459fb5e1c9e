package dev.flashsale.api.problem;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;

/**
 * Tomcat's last word on a request the application never saw (a malformed escape, raw brackets, a control
 * character or an oversized header): a problem body instead of Tomcat's HTML page. It writes only when
 * nothing else did, like the valve it replaces.
 */
public class ProblemReportValve extends ErrorReportValve {

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        HttpStatusCode code = HttpStatusCode.valueOf(status);
        ProblemCode problem = ProblemCode.forStatus(code);
        try {
            response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
            response.setCharacterEncoding(StandardCharsets.UTF_8.name());
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write("{\"type\":\"" + problem.type() + "\",\"title\":\"" + Problems.titleFor(code)
                        + "\",\"status\":" + status + ",\"detail\":\"" + Problems.detailFor(code)
                        + "\",\"code\":\"" + problem.code() + "\"}");
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // The connection is gone or the response committed meanwhile: nothing more to say.
        }
    }
}
