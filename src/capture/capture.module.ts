import { Module } from '@nestjs/common';
import { CaptureEngine } from './capture-engine';
import { SsrfGuard } from './ssrf-guard';

@Module({ providers: [CaptureEngine, SsrfGuard], exports: [CaptureEngine, SsrfGuard] })
export class CaptureModule {}
