/* The answer both HTTP-layer benchmarks send: the size and type of a
 * GETSingle response (one Chinook artist). */
#ifndef PGREST_BENCH_HELLO_BODY_H
#define PGREST_BENCH_HELLO_BODY_H
#define HELLO_BODY "[{\"artist_id\":1,\"name\":\"AC/DC\"}]"
#define HELLO_CONTENT_TYPE "application/json; charset=utf-8"
#endif
