/* The start of the Notice texts that readers act on, not only show: one
 * place for the writers (the probe, the flight recorder) and the readers
 * (the model), so that a reworded notice cannot silently turn a check on
 * (docs/format.md, "Notices"). C and C++. */
#ifndef TM_NOTICES_H
#define TM_NOTICES_H

/* A flight recorder's capture (record --last): detail of its last window
 * only, whole-run counters; or written without the program's Goodbye. */
#define TM_NOTICE_FLIGHT "flight recorder ("
/* ... and in the one whose time is where the kept detail begins. */
#define TM_NOTICE_FLIGHT_KEPT "): detail kept for the last "
/* The probe could not write the capture for a while: the frames in the
 * gap are lost, the counters are not. */
#define TM_NOTICE_GAP "capture gap:"

#endif
