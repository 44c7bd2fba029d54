import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import { AppConfig } from '../../config/config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends e-mail through the SMTP server of SMTP_URL (nodemailer); disabled when it is unset. Each delivery opens
 * its own connection, bounded by SMTP_TIMEOUT_MS for connecting, the greeting and every socket read, so a dead
 * or stalled server costs a caller at most about that long.
 */
@Injectable()
export class Mailer implements OnModuleDestroy {
  private readonly url: string | undefined;
  private readonly timeout: number;
  private readonly from: string;
  /**
   * The transport, made by the first delivery: nodemailer (about 5 MB of heap) is loaded then, not by every process
   * at start, most of which never send a message.
   */
  private transport: Promise<Transporter> | null = null;

  constructor(config: AppConfig) {
    this.url = config.get('SMTP_URL') || undefined;
    this.timeout = config.get('SMTP_TIMEOUT_MS');
    this.from = config.get('SMTP_FROM');
  }

  /** Whether an SMTP server is configured. */
  get enabled(): boolean {
    return this.url !== undefined;
  }

  /** Delivers the message to the SMTP server; rejects when it cannot (callers decide what a failure means). */
  async send(message: MailMessage): Promise<void> {
    const url = this.url;
    if (url === undefined) throw new Error('SMTP is not configured (SMTP_URL)');
    const timeout = this.timeout;
    this.transport ??= import('nodemailer').then((nodemailer) =>
      nodemailer.createTransport(
        { url, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout },
        { from: this.from },
      ),
    );
    await (await this.transport).sendMail(message);
  }

  async onModuleDestroy(): Promise<void> {
    (await this.transport?.catch(() => null))?.close();
  }
}
