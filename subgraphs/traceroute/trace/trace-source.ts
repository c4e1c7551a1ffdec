/** Where a trace came from; part of its identity with the measurement, probe and time. */
export enum TraceSource {
  RIPE_ATLAS = 'ripe_atlas',
  SCAMPER = 'scamper',
  SYNTHETIC = 'synthetic',
}
