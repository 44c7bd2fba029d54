import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
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
  private readonly transport: Transporter | null;

  constructor(config: AppConfig) {
    const url = config.get('SMTP_URL');
    const timeout = config.get('SMTP_TIMEOUT_MS');
    this.transport = url
      ? createTransport(
          { url, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout },
          { from: config.get('SMTP_FROM') },
        )
      : null;
  }

  /** Whether an SMTP server is configured. */
  get enabled(): boolean {
    return this.transport !== null;
  }

  /** Delivers the message to the SMTP server; rejects when it cannot (callers decide what a failure means). */
  async send(message: MailMessage): Promise<void> {
    if (!this.transport) throw new Error('SMTP is not configured (SMTP_URL)');
    await this.transport.sendMail(message);
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }
}
