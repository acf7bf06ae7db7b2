import { getQueueToken } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bull';
import { CAPTURE_QUEUE, HOUSEKEEPING_QUEUE, RUN_QUEUE, WEBHOOK_QUEUE } from '../queue/queues';

/** Queues of the service, in the order the metrics and the queue dashboard list them. */
export const QUEUE_NAMES = [CAPTURE_QUEUE, RUN_QUEUE, WEBHOOK_QUEUE, HOUSEKEEPING_QUEUE] as const;

/** Bull job states counted by `glimpse_queue_jobs`. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'paused'] as const;

/**
 * The Bull queue instances registered by the feature modules (screenshots, webhooks), looked up
 * once by token so the metrics and the dashboard share their connections instead of opening more.
 */
@Injectable()
export class ServiceQueues {
  private queues: Queue[] | null = null;

  constructor(private readonly moduleRef: ModuleRef) {}

  all(): Queue[] {
    this.queues ??= QUEUE_NAMES.map((name) => this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }));
    return this.queues;
  }
}
