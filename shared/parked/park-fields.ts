/**
 * Where a parked message keeps what Boomerang wrote about its failure. A copy parked by the pull or
 * event mode carries `boomerang-…` headers. A message parked natively (`delayMode: 'native'`,
 * RabbitMQ 4.3) was dead-lettered by the broker itself: Boomerang could only give it message
 * annotations, which the broker keeps only when named `x-opt-…`, so the same fields travel as
 * `x-opt-boomerang-…`, and a 0-9-1 reader (these tools) sees each one as a header of that name.
 * The source queue is the one field a native park lacks: the broker's `x-death` names it.
 */
import { BoomerangHeader } from '../message/headers.js';

/** The prefix RabbitMQ keeps a message annotation under; native mode names its own after Boomerang's headers with it. */
const ANNOTATION_PREFIX = 'x-opt-';

/**
 * The native annotation that stands for a Boomerang header (`NativeAnnotation` in `native/` spells the same names).
 * @example annotationOf('boomerang-error-name') // 'x-opt-boomerang-error-name'
 */
function annotationOf(header: string): string {
  return `${ANNOTATION_PREFIX}${header}`;
}

/** The native retry count: what `RETRY_HEADER` is to a copy (`NativeAnnotation.retryNo`). */
const NATIVE_RETRY_NO = annotationOf('boomerang-retry-no');

/** The broker's delivery time of a native retry (`NativeAnnotation.deliveryTime`): in the past once parked. */
const NATIVE_DELIVERY_TIME = annotationOf('delivery-time');

/** Every native annotation of Boomerang's own starts with this: its fields, the retry count, its failed-settlement count. */
const NATIVE_BOOKKEEPING_PREFIX = annotationOf('boomerang-');

type BoomerangField = keyof typeof BoomerangHeader;

/**
 * One Boomerang field of a parked message: its `boomerang-…` header (a parked copy), else its
 * `x-opt-boomerang-…` annotation (a native park); undefined when neither is there.
 * @example parkField({ 'x-opt-boomerang-error-name': 'PartnerDown' }, 'errorName') // 'PartnerDown'
 */
function parkField(headers: Readonly<Record<string, unknown>>, field: BoomerangField): unknown {
  const header = BoomerangHeader[field];
  return headers[header] ?? headers[annotationOf(header)];
}

/** Whether a header is native bookkeeping: an `x-opt-boomerang-…` annotation or the broker's delivery time. */
function isNativeBookkeeping(name: string): boolean {
  return name.startsWith(NATIVE_BOOKKEEPING_PREFIX) || name === NATIVE_DELIVERY_TIME;
}

export { annotationOf, isNativeBookkeeping, NATIVE_RETRY_NO, parkField };
export type { BoomerangField };
