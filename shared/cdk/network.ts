/** The network the functions (and a created broker) run in: plain ids, so that synth looks nothing up. */
import { ConfigError } from '../errors.js';

/** Subnets and security groups for the functions (and a created broker): a private broker needs them. */
type Network = {
  /** The functions' subnets (a created broker takes the first). */
  readonly subnetIds: readonly string[];
  /** The functions' security groups (and a created broker's); they must allow AMQPS (5671) to the broker. */
  readonly securityGroupIds: readonly string[];
};

/** How the caller names the two settings in its errors: the construct's props, or a CDK app's context keys. */
type NetworkLabels = { readonly subnetIds: string; readonly securityGroupIds: string };

const SUBNET_ID = /^subnet-[0-9a-f]{8}([0-9a-f]{9})?$/;
const SECURITY_GROUP_ID = /^sg-[0-9a-f]{8}([0-9a-f]{9})?$/;

/**
 * Checks the ids; throws `ConfigError` naming the setting when one list is empty or holds something
 * that is not such an id. Both lists empty is no network.
 * @example checkNetwork({ subnetIds: ['subnet-0123456789abcdef0'], securityGroupIds: ['sg-0123456789abcdef0'] }, labels)
 */
function checkNetwork(network: Network, labels: NetworkLabels): Network | undefined {
  const { subnetIds, securityGroupIds } = network;
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return undefined;
  if (subnetIds.length === 0 || securityGroupIds.length === 0) {
    throw new ConfigError(`${labels.subnetIds} and ${labels.securityGroupIds} go together: set both or neither`);
  }
  const badSubnet = subnetIds.find((id) => !SUBNET_ID.test(id));
  const badGroup = securityGroupIds.find((id) => !SECURITY_GROUP_ID.test(id));
  if (badSubnet !== undefined) throw new ConfigError(`${labels.subnetIds} must be subnet ids (subnet-0123456789abcdef0); got ${JSON.stringify(badSubnet)}`);
  if (badGroup !== undefined)
    throw new ConfigError(`${labels.securityGroupIds} must be security group ids (sg-0123456789abcdef0); got ${JSON.stringify(badGroup)}`);
  return { subnetIds: [...subnetIds], securityGroupIds: [...securityGroupIds] };
}

export { checkNetwork };
export type { Network, NetworkLabels };
