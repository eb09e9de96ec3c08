/*
 * tally: the tally of docs/interface.md "The tally", as text or JSON. Reads the model (hosts, devices,
 * counts, anomalies) and the statistics; sorts the statistics' rows (so call it once, at the end).
 * Borrows everything.
 */
#ifndef ZM_TALLY_H
#define ZM_TALLY_H

#include "model.h"
#include "kernels.h"
#include "must_check.h"
#include "placement.h"
#include "stats.h"
#include "traffic.h"

#include <jansson.h>
#include <stdio.h>

/* metadata.anomalies and the tally's "anomalies": every counter, zero or not. New reference. */
ZM_MUST_CHECK json_t *zm_tally_anomalies_json(const struct zm_anomalies *anomalies);
/* With several hosts the tally also lists each host's role and placement bound. Names longer
 * than `max_name_size` bytes (0: no limit) are shortened to that many, ending in "...".
 * `kernels` (-k): the kernel detail, printed after the device work; NULL: none. The anomaly
 * footer is printed apart (zm_tally_print_anomalies_text), after the device telemetry. */
ZM_MUST_CHECK int zm_tally_print_text(FILE *out, const struct zm_model *model,
                                      struct zm_stats *stats, const struct zm_traffic *traffic,
                                      struct zm_kernels *kernels,
                                      const struct zm_placement *placement,
                                      uint64_t max_name_size);
/* The text tally's footer, last after every section: the anomalies that are not zero, on one
 * line; nothing when all are. */
ZM_MUST_CHECK int zm_tally_print_anomalies_text(FILE *out, const struct zm_anomalies *anomalies);
/* `telemetry` (borrowed): the device telemetry rows (telemetry.h), given as "telemetry" when not
 * empty. */
ZM_MUST_CHECK int zm_tally_print_json(FILE *out, const struct zm_model *model,
                                      struct zm_stats *stats, const struct zm_traffic *traffic,
                                      struct zm_kernels *kernels,
                                      const struct zm_placement *placement, json_t *telemetry);

#endif
