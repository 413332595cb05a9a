import { z } from 'zod';
import { isKnownTopic, subscriptionMatches } from './topics.js';

export interface Registration {
  uuid: string;
  topic: string;
  address: string;
}

export const registrationSchema = z.object({
  topic: z
    .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a string') })
    .min(1, 'must be filled')
    .refine(isKnownTopic, 'is not a known topic'),
  address: z
    .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a string') })
    .min(1, 'must be filled')
    .refine((v) => {
      try {
        const url = new URL(v);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    }, 'must be an http or https URL'),
});

/** The addresses subscribed to a topic; one address subscribed twice (bare and subtopic) gets it once. */
export function addressesFor(registrations: readonly Registration[], topic: string): string[] {
  const out: string[] = [];
  for (const r of registrations) if (subscriptionMatches(r.topic, topic) && !out.includes(r.address)) out.push(r.address);
  return out;
}
