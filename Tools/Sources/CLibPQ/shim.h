#ifndef STROBE_CLIBPQ_SHIM_H
#define STROBE_CLIBPQ_SHIM_H
#include <libpq-fe.h>

/* The field code of an error's SQLSTATE, for PQresultErrorField: a
   character-literal macro, which Swift does not import. */
static const int strobe_pq_diag_sqlstate = PG_DIAG_SQLSTATE;
/* The field code of an error's primary message. */
static const int strobe_pq_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;
#endif
