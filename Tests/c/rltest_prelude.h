/* Included first in every C test: the tests use POSIX and GNU extensions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
