#ifndef DETAIL_LIMITS_H
#define DETAIL_LIMITS_H
#define COUNTING_THREADS(n) ((n) / 2)
#endif
