import type { AxiosStatic } from 'axios';

let loaded: Promise<AxiosStatic> | undefined;

/** axios, loaded on the first outgoing call: a replica that only runs sandbox steps never holds its few MB. */
export function lazyAxios(): Promise<AxiosStatic> {
  loaded ??= import('axios').then((m) => m.default);
  return loaded;
}
