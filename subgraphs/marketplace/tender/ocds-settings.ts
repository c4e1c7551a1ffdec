/** How tenders are published as OCDS; read from the environment by platform/config.ts. */
export interface OcdsSettings {
  /**
   * The prefix of every ocid (OCDS_OCID_PREFIX): `ocds-` and six characters, registered with the
   * Open Contracting Partnership by the publisher; the ocid is the prefix, a dash and the tender id.
   */
  ocidPrefix: string;
  /** The package's publisher (OCDS_PUBLISHER_NAME). */
  publisherName: string;
}

/** Placeholders to replace with a registered prefix and the publisher's name. */
export const DEFAULT_OCDS_SETTINGS: OcdsSettings = { ocidPrefix: 'ocds-fp0000', publisherName: 'Federated platform' };

/** The part of the marketplace context that publishing reads. */
export interface OcdsSettingsContext {
  ocdsSettings?: OcdsSettings;
}
