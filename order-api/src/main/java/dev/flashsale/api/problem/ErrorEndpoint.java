package dev.flashsale.api.problem;

import io.swagger.v3.oas.annotations.Hidden;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The container's error page ({@code /error}): what a filter or the container refused (a firewall
 * rejection, an unauthenticated dispatch, a {@code sendError}) is answered as a problem too, whatever the
 * client accepts. Requested directly, {@code /error} is just an unknown route.
 */
@Hidden
@RestController
class ErrorEndpoint implements ErrorController {

    @RequestMapping("${server.error.path:/error}")
    ResponseEntity<ProblemDetail> error(HttpServletRequest request) {
        HttpStatusCode status =
                request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code && code >= 400
                        ? HttpStatusCode.valueOf(code)
                        : HttpStatus.NOT_FOUND;
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(Problems.of(status, ProblemCode.forStatus(status), Problems.detailFor(status)));
    }
}
